import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export interface MyPhotoRow {
  id: number;
  caption: string;
  photo_key: string;
  thumbnail_key: string;
  status: string;
  created_at: Date;
  library_id: number;
  library_slug: string;
  library_name: string;
  library_city: string;
  library_country: string;
  library_status: string;
}

@Injectable()
export class CommunityPhotosRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async countByCreator(userId: number): Promise<number> {
    const rows = await this.dataSource.query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM library_photos WHERE created_by = $1',
      [userId],
    );
    return rows[0].n;
  }

  findByCreator(userId: number, limit: number, offset: number): Promise<MyPhotoRow[]> {
    return this.dataSource.query<MyPhotoRow[]>(
      `SELECT p.id, p.caption, p.photo_key, p.thumbnail_key, p.status, p.created_at,
              l.id AS library_id, l.slug AS library_slug, l.name AS library_name, l.city AS library_city,
              l.country AS library_country, l.status AS library_status
       FROM library_photos p JOIN libraries l ON l.id = p.library_id
       WHERE p.created_by = $1 ORDER BY p.created_at DESC, p.id DESC LIMIT $2 OFFSET $3`,
      [userId, limit, offset],
    );
  }
}
